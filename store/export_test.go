package store

import "context"

// SessionSetting is the value of the setting name, and where it came from
// ("off client"), in a session of the store's main pool and in one of its
// relaxed pool, for tests.
func SessionSetting(ctx context.Context, s *Store, name string) (main, relaxed string, err error) {
	if err = s.db.GetContext(ctx, &main, `SELECT setting || ' ' || source FROM pg_settings WHERE name = $1`, name); err != nil {
		return "", "", err
	}
	err = s.relaxed.db.GetContext(ctx, &relaxed, `SELECT setting || ' ' || source FROM pg_settings WHERE name = $1`, name)
	return main, relaxed, err
}
