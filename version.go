package main

import "runtime/debug"

// version is stamped at release time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func toolName() string {
	v := version
	if v == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return "tender " + v
}
