// Command alt times commands as whole processes, alternating them run by
// run (A, B, A, B, ...) so that on a shared machine every command sees the
// same load, and prints one markdown row per command: mean and median wall
// time, mean CPU (user + system), and each ratio to the last command (the
// anchor). Output is discarded; a failing run stops it.
//
//	alt -runs 20 -warmup 3 'name A' 'cmd A ...' 'name B' 'cmd B ...'
//
// Commands are split on spaces (no shell), so arguments cannot hold spaces.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

type sample struct{ wall, cpu time.Duration }

func main() {
	runs := flag.Int("runs", 20, "measured runs per command")
	warmup := flag.Int("warmup", 3, "unmeasured runs per command first")
	flag.Parse()
	args := flag.Args()
	if len(args) < 4 || len(args)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: alt [-runs N] [-warmup N] NAME CMD NAME CMD ...")
		os.Exit(2)
	}
	var names []string
	var cmds [][]string
	for i := 0; i < len(args); i += 2 {
		names = append(names, args[i])
		cmds = append(cmds, strings.Fields(args[i+1]))
	}
	samples := make([][]sample, len(cmds))
	for r := 0; r < *warmup+*runs; r++ {
		for i, c := range cmds {
			s, err := runOnce(c)
			if err != nil {
				fmt.Fprintf(os.Stderr, "alt: %s: %v\n", names[i], err)
				os.Exit(1)
			}
			if r >= *warmup {
				samples[i] = append(samples[i], s)
			}
		}
	}
	stat := func(ss []sample) (mean, median, cpu float64) {
		walls := make([]float64, len(ss))
		for i, s := range ss {
			walls[i] = s.wall.Seconds() * 1000
			mean += walls[i]
			cpu += s.cpu.Seconds() * 1000
		}
		slices.Sort(walls)
		n := float64(len(ss))
		return mean / n, walls[len(walls)/2], cpu / n
	}
	am, amed, acpu := stat(samples[len(samples)-1])
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("runs %d alternating (warm-up %d), load %s\n", *runs, *warmup, strings.TrimSpace(string(load)))
	fmt.Println("| command | mean wall [ms] | median wall [ms] | mean CPU [ms] | wall ratio (mean) | wall ratio (median) | CPU ratio |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|")
	for i, ss := range samples {
		m, med, cpu := stat(ss)
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f× | %.2f× | %.2f× |\n", names[i], m, med, cpu, m/am, med/amed, cpu/acpu)
	}
}

func runOnce(c []string) (sample, error) {
	cmd := exec.Command(c[0], c[1:]...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, err
	}
	wall := time.Since(start)
	u, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var cpu time.Duration
	if u != nil {
		cpu = time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	return sample{wall, cpu}, nil
}
