#version 450
// Doubles every value of the buffer.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { uint v[]; };
void main() { v[gl_GlobalInvocationID.x] *= 2u; }
