package api

import (
	"context"
	"errors"
	"testing"
)

// TestLanesBoundPublishesPerKey: a key's lane lets per publishes in at
// once; the next waits (here until its context ends) while another key's
// goes in, and goes in once one leaves; an idle lane is forgotten.
func TestLanesBoundPublishesPerKey(t *testing.T) {
	l := newLanes(2)
	bg := context.Background()
	first, err1 := l.enter(bg, "burst")
	_, err2 := l.enter(bg, "burst")
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(bg)
	cancel()
	if _, err := l.enter(gone, "burst"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a third publish of a full lane went in (%v)", err)
	}
	other, err := l.enter(bg, "other")
	if err != nil {
		t.Fatal(err)
	}
	other()
	first()
	if _, err := l.enter(bg, "burst"); err != nil {
		t.Fatalf("no room once a publish left: %v", err)
	}
	if _, ok := l.m["other"]; ok {
		t.Error("an idle lane is still kept")
	}
	if newLanes(0).per != DefaultPublishesPerType {
		t.Error("zero is not the default")
	}
}
