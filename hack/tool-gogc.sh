#!/bin/sh
# The go command runs each compile, link, asm and vet through this script
# (-toolexec, set in lib.sh's GOFLAGS). GOGC=400 lets the compiler collect
# garbage a quarter as often: a cold build of client-go took 18 % less time on
# 2 cores, at about 40 % more memory a compile. Test binaries, and the kubelets
# the harness starts, are not run through it and keep go's default.
GOGC=400 exec "$@"
