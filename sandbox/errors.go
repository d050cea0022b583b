package sandbox

import "errors"

func joinErrs(errs []error) error { return errors.Join(errs...) }
