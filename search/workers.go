package search

import "runtime"

// Workers is the number of file workers one search runs: two per CPU (a
// worker in a read or open system call leaves its CPU to another). The
// admission control in mcp budgets a search's memory by it.
func Workers() int { return 2 * max(1, runtime.GOMAXPROCS(0)) }
