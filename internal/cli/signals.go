package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// stopSignals end a run cleanly: its verifiers removed, its finished pairs kept, exit 130.
// SIGHUP is a closed terminal or SSH session; SIGQUIT would otherwise dump and exit at once,
// leaving containers behind.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// NotifyContext returns a context cancelled by the first of stopSignals. On SIGQUIT it first
// writes every goroutine's stack to w, as Go's default handler does, so a stuck run can still
// be diagnosed. Later signals are caught too, until stop is called.
func NotifyContext(parent context.Context, w io.Writer) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	go func() {
		select {
		case s := <-ch:
			if s == syscall.SIGQUIT {
				_ = pprof.Lookup("goroutine").WriteTo(w, 2)
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel()
	}
}
