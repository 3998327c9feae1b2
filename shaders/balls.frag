#version 330 core
// Anti-aliased signed-distance circle: coverage = clamp(0.5 - d, 0, 1) where
// d is the signed distance (px) from the pixel centre to the circle's edge.
// Shared by the point-sprite and the triangle path. It runs once per pixel of
// every sprite, which on a software rasteriser is most of a frame: the pixels
// outside the circle leave first, and the highlight's power is a few
// multiplications instead of pow (an exp and a log). SHADING is #defined by
// the renderer for shaded spheres (a uniform branch would cost flat discs too).
flat in vec2 v_centre;
flat in float v_radius;
flat in float v_pinned;
flat in vec4 v_color;

uniform float u_peg_ring;   // px width of the darker ring on pinned balls
uniform float u_peg_shade;  // the ring's colour factor

out vec4 frag;

const vec3 LIGHT = vec3(-0.4511292, 0.5513802, 0.7017566);  // normalize(-0.45, 0.55, 0.70)

void main() {
    vec2 local = gl_FragCoord.xy - v_centre;
    float d = length(local) - v_radius;
    float coverage = clamp(0.5 - d, 0.0, 1.0);
    if (coverage <= 0.0) discard;
    vec3 rgb = v_color.rgb;
#ifdef SHADING  // defined by the renderer when the scene asks for shaded spheres
    vec2 q = local / max(v_radius, 1e-3);
    float nz = sqrt(max(0.0, 1.0 - dot(q, q)));
    float ndl = dot(vec3(q, nz), LIGHT);
    float s = max(2.0 * ndl * nz - LIGHT.z, 0.0);  // reflect(-LIGHT, n).z: towards the viewer
    float s8 = s * s;
    s8 *= s8;
    s8 *= s8;
    rgb = rgb * (0.40 + 0.60 * max(ndl, 0.0)) + vec3(0.30 * s8 * s8 * s8);  // s^24
#endif
    // pinned: a darker ring just inside the edge, anti-aliased on its inner side
    float ring = clamp(0.5 + d + u_peg_ring, 0.0, 1.0) * v_pinned;
    rgb = mix(rgb, v_color.rgb * u_peg_shade, ring);
    frag = vec4(clamp(rgb, 0.0, 1.0), v_color.a * coverage);
}
