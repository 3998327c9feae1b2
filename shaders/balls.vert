#version 330 core
// Balls, two paths sharing this source and balls.frag. With POINT_SPRITE
// (#defined by the renderer) one GL_POINTS sprite per ball, one vertex per
// ball and no instancing, which is what a software rasteriser (Mesa
// llvmpipe) runs fastest: the square of side 2r + 1 px around the centre,
// which holds every pixel centre within r + 0.5 px (the only pixels the ball
// covers at all). Without it, the triangle path for the balls a sprite cannot
// draw (bigger than the point-size limit, or centred off the frame, where GL
// clips a whole point away): one instanced triangle per ball, equilateral
// with the circle plus one pixel of anti-aliasing fringe inscribed, so any
// radius works; only the balls flagged for it are in its buffer.
layout(location = 0) in vec4 a_ball;   // x, y, radius, flags (1 = pinned, + 2 = triangle path)
layout(location = 1) in vec4 a_color;  // rgba 0..1

uniform vec3 u_xform;    // scale, offset x, offset y: world -> framebuffer pixels
uniform vec2 u_viewport; // framebuffer size in pixels

flat out vec2 v_centre;  // framebuffer pixels
flat out float v_radius; // pixels
flat out float v_pinned; // 1 = pinned
flat out vec4 v_color;

void main() {
    float r = a_ball.z * u_xform.x;
    vec2 centre = a_ball.xy * u_xform.x + u_xform.yz;
    v_centre = centre;
    v_radius = r;
    v_pinned = mod(a_ball.w, 2.0);
    v_color = a_color;
#ifdef POINT_SPRITE
    gl_PointSize = 2.0 * r + 1.0;
    // a ball flagged for the triangle path is put outside the clip volume
    gl_Position = a_ball.w >= 2.0 ? vec4(2.0, 2.0, 0.0, 1.0)
                                  : vec4(centre / u_viewport * 2.0 - 1.0, 0.0, 1.0);
#else
    // vertices at twice the inradius, at 90, 210 and 330 degrees
    const vec2 corners[3] = vec2[3](vec2(0.0, 2.0), vec2(-1.7320508, -1.0), vec2(1.7320508, -1.0));
    vec2 p = centre + corners[gl_VertexID] * (r + 0.5);  // pixel centres farther out have zero coverage
    gl_Position = vec4(p / u_viewport * 2.0 - 1.0, 0.0, 1.0);
#endif
}
