package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hookrelay/hookrelay/secrets"
)

// sealedColumn is a column of sealed secrets (secrets.Sealed.Text) and the
// column of their key ids, in a table whose text id column is the
// associated data each was sealed for.
type sealedColumn struct{ table, text, key string }

// name is the column as `hookrelay secrets status` shows it.
func (c sealedColumn) name() string { return c.table + "." + c.text }

// sealedColumns are every stored secret hookrelay seals: a new kind of
// secret is sealed with secrets.Ring.Seal for its row's id and listed here,
// and Reseal and SecretCounts then cover it.
var sealedColumns = []sealedColumn{
	{"subscriptions", "signing_secret", "signing_secret_key"},
	{"subscriptions", "previous_signing_secret", "previous_signing_secret_key"},
}

// ResealMode says which stored secrets Reseal rewrites, and how.
type ResealMode int

const (
	// SealPlain seals the plain-text secrets (from before encryption)
	// under the ring's first key: what every process does at start.
	SealPlain ResealMode = iota
	// SealAll seals every secret not under the ring's first key under it
	// (`hookrelay secrets rotate`).
	SealAll
	// Unseal writes every secret back in plain text (`hookrelay secrets
	// decrypt`, before a downgrade).
	Unseal
)

// where is the condition on c's rows the mode rewrites; $1 is the first key.
func (m ResealMode) where(c sealedColumn) string {
	switch m {
	case SealPlain:
		return c.key + ` = '' AND $1::text <> ''`
	case SealAll:
		return c.key + ` <> $1`
	default:
		return c.key + ` <> '' AND $1::text = $1::text`
	}
}

// lock is how the mode locks the rows it rewrites, never against the key
// share locks that inserting deliveries takes on their subscription: at
// start (SealPlain), skipping rows another process is sealing; otherwise
// waiting for any change of them (a key's rotation) to commit.
func (m ResealMode) lock() string {
	if m == SealPlain {
		return `FOR NO KEY UPDATE SKIP LOCKED`
	}
	return `FOR NO KEY UPDATE`
}

// Resealed is what Reseal did: how many secrets it rewrote, and the
// columns and rows of those that did not open (never their text).
type Resealed struct {
	Rewritten int
	Failed    []string
}

// ResealBatch is how many rows Reseal rewrites per transaction.
const ResealBatch = 200

// Reseal rewrites the stored secrets mode says, in transactions of
// ResealBatch rows, each locking its rows (mode.lock) while the service
// runs: a process rotating a subscription's key meanwhile waits for, or is
// waited for by, its batch.
// A secret that does not open is left as it is and reported.
func (s *Store) Reseal(ctx context.Context, mode ResealMode) (Resealed, error) {
	var res Resealed
	if mode != Unseal && s.keys.Primary() == "" {
		return res, secrets.ErrNoKeys
	}
	for _, c := range sealedColumns {
		failed := []string{} // not nil: pq sends nil as NULL, which excludes every row
		for {
			read, n, err := s.resealBatch(ctx, c, mode, &failed)
			if err != nil {
				return res, err
			}
			res.Rewritten += n
			if read == 0 {
				break
			}
		}
		for _, id := range failed {
			res.Failed = append(res.Failed, c.name()+" "+id)
		}
	}
	return res, nil
}

// sealedRow is one secret as resealBatch reads it.
type sealedRow struct {
	ID    string `db:"id"`
	Text  string `db:"text"`
	KeyID string `db:"key_id"`
}

// resealBatch rewrites one batch of c's rows in mode, but for those failed
// lists (to which it adds those that do not open): it read rows, failures
// included (0 ends the pass), and rewrote n.
func (s *Store) resealBatch(ctx context.Context, c sealedColumn, mode ResealMode, failed *[]string) (read, n int, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		var rows []sealedRow
		err := tx.SelectContext(ctx, &rows, `SELECT id, `+c.text+` AS text, `+c.key+` AS key_id FROM `+c.table+`
			WHERE `+c.text+` <> '' AND `+mode.where(c)+` AND id <> ALL($2)
			ORDER BY id LIMIT $3 `+mode.lock(), s.keys.Primary(), pq.Array(*failed), ResealBatch)
		if err != nil {
			return fmt.Errorf("store: read %s: %w", c.name(), err)
		}
		read = len(rows)
		var ids, texts, keys []string
		for _, r := range rows {
			out, err := s.rewrite(r, mode)
			if errors.Is(err, secrets.ErrOpen) || errors.Is(err, secrets.ErrUnknownKey) {
				*failed = append(*failed, r.ID)
				continue
			} else if err != nil {
				return err
			}
			ids, texts, keys = append(ids, r.ID), append(texts, out.Text), append(keys, out.KeyID)
		}
		_, err = tx.ExecContext(ctx, `UPDATE `+c.table+` t SET `+c.text+` = u.text, `+c.key+` = u.key_id
			FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, text, key_id) WHERE t.id = u.id`,
			pq.Array(ids), pq.Array(texts), pq.Array(keys))
		if err != nil {
			return fmt.Errorf("store: rewrite %s: %w", c.name(), err)
		}
		n = len(ids)
		return nil
	})
	return read, n, err
}

// rewrite is r opened, then sealed under the first key or, to Unseal, in
// plain text.
func (s *Store) rewrite(r sealedRow, mode ResealMode) (secrets.Sealed, error) {
	plain, err := s.keys.Open(secrets.Sealed{KeyID: r.KeyID, Text: r.Text}, r.ID)
	if err != nil || mode == Unseal {
		return secrets.Sealed{Text: plain}, err
	}
	return s.keys.Seal(plain, r.ID)
}

// KeyCount is how many secrets of a column are sealed under a key ("" for
// plain text).
type KeyCount struct {
	Column string `db:"column"`
	KeyID  string `db:"key_id"`
	Count  int64  `db:"count"`
}

// SecretCounts counts the stored secrets per column and key id.
func (s *Store) SecretCounts(ctx context.Context) ([]KeyCount, error) {
	var out []KeyCount
	for _, c := range sealedColumns {
		var rows []KeyCount
		err := s.db.SelectContext(ctx, &rows, `SELECT $1 AS column, `+c.key+` AS key_id, count(*) AS count
			FROM `+c.table+` WHERE `+c.text+` <> '' GROUP BY `+c.key+` ORDER BY `+c.key, c.name())
		if err != nil {
			return nil, fmt.Errorf("store: count %s: %w", c.name(), err)
		}
		out = append(out, rows...)
	}
	return out, nil
}
