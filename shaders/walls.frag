#version 330 core
in vec2 v_pos;
flat in vec2 v_p0;
flat in vec2 v_p1;

uniform float u_half_width;
uniform vec4 u_color;

out vec4 frag;

void main() {
    vec2 ab = v_p1 - v_p0;
    float t = clamp(dot(v_pos - v_p0, ab) / max(dot(ab, ab), 1e-9), 0.0, 1.0);
    float d = length(v_pos - (v_p0 + t * ab)) - u_half_width;
    float coverage = clamp(0.5 - d, 0.0, 1.0);
    if (coverage <= 0.0) discard;
    frag = vec4(u_color.rgb, u_color.a * coverage);
}
