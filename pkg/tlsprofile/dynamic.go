package tlsprofile

import (
	"crypto/tls"
	"sync/atomic"
)

// Dynamic holds the profile in force and applies it to every new
// connection of the servers it configures, so that a new profile takes
// effect without a restart. Connections already established keep the
// version and suite they negotiated: TLS cannot change them.
type Dynamic struct {
	p atomic.Pointer[Profile]
}

// NewDynamic returns a Dynamic holding p.
func NewDynamic(p Profile) *Dynamic {
	d := &Dynamic{}
	d.Set(p)
	return d
}

// Profile returns the profile in force.
func (d *Dynamic) Profile() Profile { return *d.p.Load() }

// Set puts p in force for new connections.
func (d *Dynamic) Set(p Profile) { d.p.Store(&p) }

// ServerOption returns a TLS option for a server (controller-runtime's
// TLSOpts). It applies the profile in force to the server's configuration,
// and through GetConfigForClient applies the profile in force at each
// handshake to a copy of it, including the changes the options after this
// one make. A GetConfigForClient set before it is kept and its result
// adjusted the same way.
func (d *Dynamic) ServerOption() func(*tls.Config) {
	return func(c *tls.Config) {
		d.Profile().Apply(c)
		previous := c.GetConfigForClient
		c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			base := c
			if previous != nil {
				cfg, err := previous(hello)
				if err != nil {
					return nil, err
				}
				if cfg != nil {
					base = cfg
				}
			}
			cfg := base.Clone()
			cfg.GetConfigForClient = nil
			d.Profile().Apply(cfg)
			return cfg, nil
		}
	}
}
