#version 330 core
// Copy the trails texture (same size as the target) to the framebuffer.
uniform sampler2D u_texture;
out vec4 frag;

void main() {
    frag = vec4(texelFetch(u_texture, ivec2(gl_FragCoord.xy), 0).rgb, 1.0);
}
