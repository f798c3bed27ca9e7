package e2e

import (
	"flag"
	"fmt"
	"strconv"
	"sync"
)

// turns hands the tests with fleets of their own their turn to run: at most
// n at once, in the order they were declared (fleets_test.go, longest
// first). The go command's own limit (-parallel) wakes the tests that wait
// for it in no set order, so a long test could start last and hold the
// package minutes after the others; TestMain lifts that limit and sets
// turns to it instead.
type turns struct {
	mu    sync.Mutex
	free  int
	queue []chan struct{}
}

// fleetTurns is the package's turns, sized by TestMain.
var fleetTurns = &turns{free: 1}

// take queues the caller and returns the channel that is closed when its
// turn comes. Tests queue in the order the go command runs their
// sequential part, which is the order they are declared.
func (q *turns) take() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := make(chan struct{})
	q.queue = append(q.queue, c)
	q.next()
	return c
}

// give gives a turn back and hands it to the next in the queue.
func (q *turns) give() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free++
	q.next()
}

// next hands free turns to the queue's head; q.mu is held.
func (q *turns) next() {
	for q.free > 0 && len(q.queue) > 0 {
		close(q.queue[0])
		q.queue = q.queue[1:]
		q.free--
	}
}

// takeOverParallel makes -parallel the number of fleets that run at once
// beside the shared fleet's tests, ordered by fleetTurns, and lifts the go
// command's own limit so that tests waiting for their turn do not hold its
// slots. It runs after flag.Parse.
func takeOverParallel() error {
	f := flag.Lookup("test.parallel")
	if f == nil {
		return nil
	}
	n, err := strconv.Atoi(f.Value.String())
	if err != nil || n < 1 {
		return fmt.Errorf("-test.parallel %q is not a positive number", f.Value.String())
	}
	fleetTurns = &turns{free: n}
	return f.Value.Set(strconv.Itoa(n + 1000))
}
