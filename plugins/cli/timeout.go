package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// timeoutValue is a --timeout: a Go duration such as 5m or 90s, or, as
// clusteradm's --timeout takes it, a bare number of seconds.
type timeoutValue time.Duration

// Set parses a duration or a number of seconds.
func (t *timeoutValue) Set(s string) error {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		*t = timeoutValue(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither a duration such as 5m or 90s nor a number of seconds", s)
	}
	*t = timeoutValue(d)
	return nil
}

// String is the duration, as DurationVar shows it.
func (t *timeoutValue) String() string { return time.Duration(*t).String() }

// Type names the value in --help.
func (t *timeoutValue) Type() string { return "duration" }

// AddTimeoutFlag registers --timeout on fs into p with default def: a
// duration (5m, 90s) or a bare number of seconds (300), as clusteradm's
// --timeout takes.
func AddTimeoutFlag(fs *pflag.FlagSet, p *time.Duration, def time.Duration, usage string) {
	*p = def
	fs.Var((*timeoutValue)(p), "timeout", usage+" A duration such as 5m, or a number of seconds.")
}
