#version 330 core
// Anti-aliased signed-distance circle: coverage = clamp(0.5 - d, 0, 1) where
// d is the signed distance (px) from the pixel centre to the circle's edge.
in vec2 v_local;
flat in float v_radius;
flat in float v_flags;
flat in vec4 v_color;

uniform bool u_shading;
uniform float u_peg_ring;   // px width of the darker ring on pinned balls
uniform float u_peg_shade;  // the ring's colour factor

out vec4 frag;

void main() {
    float dist = length(v_local);
    float d = dist - v_radius;
    float coverage = clamp(0.5 - d, 0.0, 1.0);
    if (coverage <= 0.0) discard;
    vec3 rgb = v_color.rgb;
    if (u_shading) {
        vec2 q = v_local / max(v_radius, 1e-3);
        float nz = sqrt(max(0.0, 1.0 - dot(q, q)));
        vec3 n = vec3(q, nz);
        vec3 l = normalize(vec3(-0.45, 0.55, 0.70));
        float diffuse = max(dot(n, l), 0.0);
        float spec = pow(max(dot(reflect(-l, n), vec3(0.0, 0.0, 1.0)), 0.0), 24.0);
        rgb = rgb * (0.40 + 0.60 * diffuse) + vec3(0.30 * spec);
    }
    if (v_flags > 0.5) {
        // pinned: a darker ring just inside the edge, anti-aliased on its inner side
        float ring = clamp(0.5 + d + u_peg_ring, 0.0, 1.0);
        rgb = mix(rgb, v_color.rgb * u_peg_shade, ring);
    }
    frag = vec4(clamp(rgb, 0.0, 1.0), v_color.a * coverage);
}
