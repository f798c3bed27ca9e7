package hub

import (
	"fmt"
	"sync"
	"time"
)

// Limits bound what tunnels and proxied connections may hold of the hub
// tunnel. A zero field takes DefaultLimits'.
type Limits struct {
	// ConnectionsPerCluster bounds the proxied connections open to one
	// cluster at once. Watches, logs and execs hold theirs as long as they
	// run, and the proxy subresource is a long-running request, so the hub
	// API server's own limits do not count them.
	ConnectionsPerCluster int
	// ConnectionsPerUser bounds one hub user's proxied connections open at
	// once, to every cluster together.
	ConnectionsPerUser int
	// Lifetime is how long a tunnel stays attached before the hub closes
	// it and its agent attaches again, authenticating with the credential
	// it holds then. Each tunnel's lifetime is up to a tenth longer, so
	// that a fleet attached at once does not come back at once.
	Lifetime time.Duration
	// Reauthorize is how often each attached tunnel's agent is authorized
	// again; a denial closes the tunnel.
	Reauthorize time.Duration
	// BufferBudget bounds the bytes agents sent on proxied connections
	// that the hub has not yet passed on to their clients, summed over
	// every tunnel; past it, the connection holding the most is closed.
	// Zero takes DefaultBufferBudget().
	BufferBudget int64
	// WriteTimeout is how long a proxied request's client may take no
	// more of the answer before the hub closes its connection.
	WriteTimeout time.Duration
}

// DefaultLimits are the limits the hub tunnel runs with unless told
// otherwise.
func DefaultLimits() Limits {
	return Limits{ConnectionsPerCluster: 512, ConnectionsPerUser: 2048, Lifetime: time.Hour, Reauthorize: time.Minute, WriteTimeout: time.Minute}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.ConnectionsPerCluster == 0 {
		l.ConnectionsPerCluster = d.ConnectionsPerCluster
	}
	if l.ConnectionsPerUser == 0 {
		l.ConnectionsPerUser = d.ConnectionsPerUser
	}
	if l.Lifetime == 0 {
		l.Lifetime = d.Lifetime
	}
	if l.Reauthorize == 0 {
		l.Reauthorize = d.Reauthorize
	}
	if l.BufferBudget == 0 {
		l.BufferBudget = DefaultBufferBudget()
	}
	if l.WriteTimeout == 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	return l
}

// Validate checks l as flags set it.
func (l Limits) Validate() error {
	switch {
	case l.ConnectionsPerCluster < 0 || l.ConnectionsPerUser < 0:
		return fmt.Errorf("proxied connection limits must be positive, not %d per cluster and %d per user", l.ConnectionsPerCluster, l.ConnectionsPerUser)
	case l.Lifetime != 0 && l.Lifetime < time.Minute:
		return fmt.Errorf("a tunnel lifetime of %s is shorter than a minute: agents would spend their time attaching", l.Lifetime)
	case l.Reauthorize < 0:
		return fmt.Errorf("the tunnel re-authorization interval %s must be positive", l.Reauthorize)
	case l.BufferBudget != 0 && l.BufferBudget < MinBufferBudget:
		return fmt.Errorf("a proxy buffer budget of %d bytes is less than %s (--proxy-buffer-budget): two connections paused by the tunnel would pass it", l.BufferBudget, mib(MinBufferBudget))
	case l.WriteTimeout != 0 && l.WriteTimeout < time.Second:
		return fmt.Errorf("a proxy write timeout of %s is shorter than a second (--proxy-write-timeout): clients on a slow link would lose their answers", l.WriteTimeout)
	}
	return nil
}

// connLimiter counts the proxied connections open per cluster and per user.
type connLimiter struct {
	perCluster, perUser int

	mu        sync.Mutex
	byCluster map[string]int
	byUser    map[string]int
}

func newConnLimiter(perCluster, perUser int) *connLimiter {
	return &connLimiter{perCluster: perCluster, perUser: perUser, byCluster: map[string]int{}, byUser: map[string]int{}}
}

// acquire counts a connection of user to cluster, or says which limit it
// would pass. The returned function releases it.
func (l *connLimiter) acquire(cluster, user string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.byCluster[cluster]; n >= l.perCluster {
		return nil, fmt.Errorf("cluster %s has %d proxied connections open, the hub controller's limit (--proxy-max-connections-per-cluster): close a watch, log or exec to it, or try again later", cluster, n)
	}
	if n := l.byUser[user]; n >= l.perUser {
		return nil, fmt.Errorf("user %q has %d proxied connections open, the hub controller's limit (--proxy-max-connections-per-user): close a watch, log or exec, or try again later", user, n)
	}
	l.byCluster[cluster]++
	l.byUser[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			decrement(l.byCluster, cluster)
			decrement(l.byUser, user)
		})
	}, nil
}

func decrement(m map[string]int, key string) {
	if m[key] <= 1 {
		delete(m, key)
		return
	}
	m[key]--
}
