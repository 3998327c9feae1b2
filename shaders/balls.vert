#version 330 core
// One instanced triangle per ball (half the primitives of a quad, which is what
// a software rasteriser pays for most with many small balls). Per instance:
// centre (world px, y up), radius, flags (1 = pinned) and colour. The
// triangle is equilateral with the circle plus one pixel of anti-aliasing
// fringe inscribed, so any radius works (no point-size limit).
layout(location = 0) in vec4 a_ball;   // x, y, radius, flags
layout(location = 1) in vec4 a_color;  // rgba 0..1

uniform vec3 u_xform;    // scale, offset x, offset y: world -> framebuffer pixels
uniform vec2 u_viewport; // framebuffer size in pixels

out vec2 v_local;        // fragment position relative to the centre, in pixels
flat out float v_radius; // radius in pixels
flat out float v_flags;
flat out vec4 v_color;

void main() {
    // vertices at twice the inradius, at 90, 210 and 330 degrees
    const vec2 corners[3] = vec2[3](vec2(0.0, 2.0), vec2(-1.7320508, -1.0), vec2(1.7320508, -1.0));
    vec2 corner = corners[gl_VertexID];
    float r = a_ball.z * u_xform.x;
    float extent = r + 0.5;  // pixel centres farther out have zero coverage
    vec2 centre = a_ball.xy * u_xform.x + u_xform.yz;
    v_local = corner * extent;
    v_radius = r;
    v_flags = a_ball.w;
    v_color = a_color;
    vec2 p = centre + v_local;
    gl_Position = vec4(p / u_viewport * 2.0 - 1.0, 0.0, 1.0);
}
