package secrets

import "sync"

// cacheSize bounds the secrets a ring keeps opened: more than any
// deployment's live subscriptions have (two each, during a rotation's
// overlap), small in memory.
const cacheSize = 1 << 16

// cache keeps opened secrets by row, key id and ciphertext, so that a
// changed secret (a new ciphertext) is never answered from it. When full it
// starts over: a cheap bound, as opening again costs a microsecond.
type cache struct {
	mu  sync.RWMutex
	max int
	m   map[cacheKey]string
}

// cacheKey is the cache's key for a secret s sealed for a row.
type cacheKey struct {
	row string
	s   Sealed
}

func newCache(max int) *cache { return &cache{max: max, m: map[cacheKey]string{}} }

func (c *cache) get(k cacheKey) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache) put(k cacheKey, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		c.m = map[cacheKey]string{}
	}
	c.m[k] = v
}
