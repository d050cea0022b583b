package broken

import "testing"

func TestF(t *testing.T) {
	var x int = "not an int"
	_ = x
}
