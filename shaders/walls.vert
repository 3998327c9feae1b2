#version 330 core
// One instanced quad per wall segment, drawn as an anti-aliased capsule.
layout(location = 0) in vec4 a_seg;  // x0, y0, x1, y1 (world px, y up)

uniform vec3 u_xform;
uniform vec2 u_viewport;
uniform float u_half_width;  // px

out vec2 v_pos;          // framebuffer px
flat out vec2 v_p0;
flat out vec2 v_p1;

void main() {
    vec2 p0 = a_seg.xy * u_xform.x + u_xform.yz;
    vec2 p1 = a_seg.zw * u_xform.x + u_xform.yz;
    vec2 dir = p1 - p0;
    float len = length(dir);
    dir = len > 0.0 ? dir / len : vec2(1.0, 0.0);
    vec2 nrm = vec2(-dir.y, dir.x);
    float along = float(gl_VertexID & 1);
    float side = float((gl_VertexID >> 1) & 1) * 2.0 - 1.0;
    float grow = u_half_width + 1.0;
    vec2 base = mix(p0, p1, along);
    vec2 p = base + dir * (along * 2.0 - 1.0) * grow + nrm * side * grow;
    v_pos = p;
    v_p0 = p0;
    v_p1 = p1;
    gl_Position = vec4(p / u_viewport * 2.0 - 1.0, 0.0, 1.0);
}
