#version 330 core
// One instanced quad per ball. Per instance: centre (world px, y up), radius,
// flags (1 = pinned) and colour. The quad covers the circle plus one pixel of
// anti-aliasing fringe, so any radius works (no point-size limit).
layout(location = 0) in vec4 a_ball;   // x, y, radius, flags
layout(location = 1) in vec4 a_color;  // rgba 0..1

uniform vec3 u_xform;    // scale, offset x, offset y: world -> framebuffer pixels
uniform vec2 u_viewport; // framebuffer size in pixels

out vec2 v_local;        // fragment position relative to the centre, in pixels
flat out float v_radius; // radius in pixels
flat out float v_flags;
flat out vec4 v_color;

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1)) * 2.0 - 1.0;
    float r = a_ball.z * u_xform.x;
    float extent = r + 1.0;
    vec2 centre = a_ball.xy * u_xform.x + u_xform.yz;
    v_local = corner * extent;
    v_radius = r;
    v_flags = a_ball.w;
    v_color = a_color;
    vec2 p = centre + v_local;
    gl_Position = vec4(p / u_viewport * 2.0 - 1.0, 0.0, 1.0);
}
