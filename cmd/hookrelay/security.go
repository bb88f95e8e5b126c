package main

import (
	"errors"
	"fmt"
	"github.com/hookrelay/hookrelay/activities"
	"net"
	"net/netip"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/worker"
)

// errNoAdminKey is why `hookrelay api` will not start without credentials.
var errNoAdminKey = fmt.Errorf("%s is not set: the API would answer anyone. Set it (at least %d characters), "+
	"or set %s=true to serve every request as the default account (local trials only)",
	config.EnvAdminKey, config.MinAdminKeyLength, config.EnvInsecureNoAuth)

// apiAuth is how `hookrelay api` authenticates: with the admin key and API
// keys, or, when asked for explicitly, not at all.
func (a *app) apiAuth() (api.Auth, error) {
	sec := a.cfg.Security
	if sec.AdminKey == "" && !sec.InsecureNoAuth {
		return api.Auth{}, errNoAdminKey
	}
	if sec.InsecureNoAuth {
		a.logger.Warn("api_open_without_credentials", "setting", config.EnvInsecureNoAuth)
	}
	return api.Auth{AdminKey: sec.AdminKey, MetricsToken: a.cfg.Metrics.Token, Open: sec.InsecureNoAuth,
		SASSecret: a.cfg.EventGrid.SASSecret}, nil
}

// devAuth is how `hookrelay dev` authenticates: as `hookrelay api` when an
// admin key is set; else open, for the README walk-through, and then only
// on a loopback address.
func (a *app) devAuth() (api.Auth, error) {
	sec := a.cfg.Security
	if sec.AdminKey != "" {
		return api.Auth{AdminKey: sec.AdminKey, MetricsToken: a.cfg.Metrics.Token, Open: sec.InsecureNoAuth,
			SASSecret: a.cfg.EventGrid.SASSecret}, nil
	}
	if !loopbackAddr(a.cfg.HTTPAddr) {
		return api.Auth{}, errors.New("hookrelay dev runs open (no credentials) only on a loopback address: " +
			"set " + config.EnvAdminKey + " to listen on " + a.cfg.HTTPAddr)
	}
	return api.Auth{Open: true, MetricsToken: a.cfg.Metrics.Token, SASSecret: a.cfg.EventGrid.SASSecret}, nil
}

// loopbackAddr tells whether addr (host:port) listens on loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// guard is the egress guard of this run: the deny list but for
// HOOKRELAY_EGRESS_ALLOW, and, under `hookrelay dev`, loopback.
func (a *app) guard(dev bool) *egress.Guard {
	allow := a.cfg.Security.EgressAllow
	if dev {
		allow = append(append([]netip.Prefix{}, allow...), egress.Loopback...)
	}
	return egress.New(allow)
}

func (a *app) workerOptions(dev bool) worker.Options {
	opts := worker.DefaultOptions()
	opts.HTTPConcurrency = a.cfg.WorkerConcurrency
	opts.FirstAttemptsPerEndpoint = a.cfg.FirstAttemptsPerEndpoint
	opts.RetriesPerSecond = a.cfg.RetriesPerSecond
	opts.Shares = a.shares
	opts.EdgeDefaults = a.cfg.EdgeDefaults
	opts.Egress = a.guard(dev)
	opts.Metrics = a.metrics
	opts.PublicURL, opts.EventGridTopic = a.cfg.PublicURL, a.cfg.EventGrid.Topic
	opts.LoopbackValidationURL = dev // production refuses a validationUrl the receiver cannot reach
	opts.Retention, opts.DeadLetterRetention = a.cfg.Retention.Finished, a.cfg.Retention.DeadLetters
	opts.Tracing = a.tracing
	opts.DeadLetterBlobs = &activities.DeadLetterBlobs{Accounts: a.storage, Delay: a.cfg.DeadLetterBlobs.Delay}
	return opts
}
