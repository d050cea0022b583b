package broken

func F() int { return 1 }
