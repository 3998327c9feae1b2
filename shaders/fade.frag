#version 330 core
// Trails: blend the accumulated picture towards the background colour.
uniform vec4 u_color;  // background rgb, alpha = how much of it to blend in
out vec4 frag;

void main() {
    frag = u_color;
}
