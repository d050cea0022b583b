package notests

func G() {}
