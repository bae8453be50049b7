package atomicfile

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// The registry of what a signal must clean up. Its lock is held while a
// temporary file is made and while one is renamed to its target, so that a
// signal comes either before (the file is removed) or after (the output is
// whole).
var registry struct {
	sync.Mutex
	dying   bool
	next    int
	removes map[int]func()
	procs   map[*os.Process]bool
}

// register runs create under the lock and keeps the function it returns, to
// be run by the signal handler; *id identifies it for unregister.
func register(create func() (remove func(), err error), id *int) error {
	registry.Lock()
	defer registry.Unlock()
	if registry.dying {
		return ErrInterrupted
	}
	remove, err := create()
	if err != nil {
		return err
	}
	if registry.removes == nil {
		registry.removes = map[int]func(){}
	}
	registry.next++
	*id = registry.next
	registry.removes[*id] = remove
	return nil
}

// locked runs fn under the lock, unless a signal has come.
func locked(fn func() error) error {
	registry.Lock()
	defer registry.Unlock()
	if registry.dying {
		return ErrInterrupted
	}
	return fn()
}

func unregister(id int) {
	registry.Lock()
	delete(registry.removes, id)
	registry.Unlock()
}

// finish runs done under the lock and unregisters id, unless a signal has
// come.
func finish(id int, done func() error) error {
	registry.Lock()
	defer registry.Unlock()
	if registry.dying {
		return ErrInterrupted
	}
	err := done()
	if err == nil {
		delete(registry.removes, id)
	}
	return err
}

// Run runs cmd as exec.Cmd.Run does, and kills it if a signal comes while it
// runs.
func Run(cmd *exec.Cmd) error {
	registry.Lock()
	if registry.dying {
		registry.Unlock()
		return ErrInterrupted
	}
	err := cmd.Start()
	if err == nil {
		if registry.procs == nil {
			registry.procs = map[*os.Process]bool{}
		}
		registry.procs[cmd.Process] = true
	}
	registry.Unlock()
	if err != nil {
		return err
	}
	err = cmd.Wait()
	registry.Lock()
	delete(registry.procs, cmd.Process)
	registry.Unlock()
	return err
}

// RemoveOnSignal installs a handler of SIGINT, SIGTERM and SIGHUP that kills
// the programs started with Run, removes every temporary file and folder
// that is still registered, and then ends the process by the same signal.
// stop uninstalls it.
func RemoveOnSignal() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	quit := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cleanUp()
			die(sig)
		case <-quit:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(quit)
	}
}

// cleanUp kills the registered programs and removes the registered files.
// It keeps the lock: nothing new is made or committed afterwards.
func cleanUp() {
	registry.Lock()
	registry.dying = true
	for p := range registry.procs {
		p.Kill()
	}
	for _, remove := range registry.removes {
		remove()
	}
	if len(registry.procs) > 0 {
		// A killed program may still finish a system call that creates a
		// file: give it a moment, then remove again.
		time.Sleep(100 * time.Millisecond)
		for _, remove := range registry.removes {
			remove()
		}
	}
}

// die ends the process by sig, so that its parent sees how it ended.
func die(sig os.Signal) {
	signal.Reset(sig)
	if s, ok := sig.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), s)
		time.Sleep(time.Second)
		os.Exit(128 + int(s))
	}
	os.Exit(1)
}
