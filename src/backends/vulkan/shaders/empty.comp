// The launch-latency shader: one invocation that does nothing.
#version 450
layout(local_size_x = 1) in;
void main() {}
