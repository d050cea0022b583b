package main

// version is stamped at release time with -ldflags "-X main.version=v1.2.3"; the CLI falls
// back to the module version of the build.
var version = "dev"
