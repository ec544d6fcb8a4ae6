//go:build benchprofile

package main

// Built only with -tags benchprofile (bench/mcp/run.sh with PROFILE=1):
// with SFSBENCH_CPUPROFILE=PREFIX in the environment, SIGUSR1 starts a CPU
// profile written to PREFIX-N.pprof (N counts from 1) and SIGUSR2 stops
// it; the file appears under its name (renamed from PREFIX-N.pprof.part)
// once it is complete. mcpbench -profile PREFIX-N.pprof sends the signals
// at the start and end of its measured window and waits for the file. Production builds have no such handler (SIGUSR1 would
// end them).

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func init() {
	prefix := os.Getenv("SFSBENCH_CPUPROFILE")
	if prefix == "" {
		return
	}
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		var f *os.File
		n := 0
		for s := range sig {
			switch {
			case s == syscall.SIGUSR1 && f == nil:
				n++
				var err error
				if f, err = os.Create(fmt.Sprintf("%s-%d.pprof.part", prefix, n)); err != nil {
					fmt.Fprintln(os.Stderr, "benchprofile:", err)
					continue
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					fmt.Fprintln(os.Stderr, "benchprofile:", err)
					f.Close()
					f = nil
				}
			case s == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				f.Close()
				if err := os.Rename(f.Name(), fmt.Sprintf("%s-%d.pprof", prefix, n)); err != nil {
					fmt.Fprintln(os.Stderr, "benchprofile:", err)
				}
				f = nil
			}
		}
	}()
}
