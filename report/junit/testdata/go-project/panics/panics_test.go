package panics

import "testing"

func TestBeforePanic(t *testing.T) {}

func TestPanics(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}

func TestAfterPanic(t *testing.T) {}
