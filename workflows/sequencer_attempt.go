package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"
)

// changeSequencerFirstAttempt marks the change (issue 56) after which a
// Sequencer makes the first attempt of each delivery of its sequence
// itself, as a local activity, and starts a Delivery child only for one
// that attempt did not deliver (attemptFirst). Runs from before it start a
// child for every delivery, and replay as they ran.
const changeSequencerFirstAttempt = "sequencer-first-attempt"

// sequencerTaskAttempts bounds the first attempts one workflow task of a
// Sequencer makes: their markers reach the server together when the task
// completes, so it bounds the task's size, and the attempts a worker that
// dies mid-task leaves for the next one to look at again in PostgreSQL.
const sequencerTaskAttempts = 64

// FirstAttempt is the first attempt of a delivery that its Sequencer made
// itself (DeliveryInput.First): what it came to, or the error of hookrelay
// itself that kept it from being made.
type FirstAttempt struct {
	Result DeliverResult
	Error  string `json:",omitempty"`
}

// err is the attempt's error, nil when it was made.
func (f *FirstAttempt) err() error {
	if f.Error == "" {
		return nil
	}
	return errors.New(f.Error)
}

// sequencedFirst returns, once, the first attempt the delivery's Sequencer
// made (DeliveryInput.First); the attempts after it are made as after a
// local first attempt (localAttempt).
func (d *delivery) sequencedFirst() (*FirstAttempt, bool) {
	if d.in.First == nil || d.firstDone {
		return nil, false
	}
	d.firstDone = true
	return d.in.First, true
}

// attemptFirst makes the first attempt of n, a delivery no workflow has
// taken up yet (n.Fresh), as a local activity of the Sequencer: one that
// delivers it (the activity records it delivered before it answers) ends
// it, and the sequence moves on in the same workflow task, with no
// workflow of its own. Any other outcome hands it, with that outcome, to a
// Delivery child that goes on from there (retries, waiting for its
// endpoint, dead-lettering) exactly as if it had made that attempt itself,
// its time counting from that attempt's request if one went out;
// unless n ended meanwhile (skipped during the attempt), which PostgreSQL
// is asked again. A delivery some workflow took up already (a retried or
// waiting one, or one cut off by a crash) gets a child as before.
func (s *sequencer) attemptFirst(n NextResult) {
	if !n.Fresh {
		s.deliver(n, nil, time.Time{})
		return
	}
	s.boundTask()
	scheduled := workflow.Now(s.ctx)
	res, err := s.attempt(n, scheduled)
	if err == nil && res.Finished {
		s.in.After = n.Seq
		s.ended++
		return
	}
	again, lookErr := s.next()
	if lookErr == nil && (!again.Found || again.DeliveryID != n.DeliveryID) {
		s.in.After = n.Seq
		s.ended++
		return
	}
	first := &FirstAttempt{Result: res}
	if err != nil {
		first.Error = err.Error()
	}
	if err != nil || res.Skipped || res.Throttled {
		// No request went out: the child's time counts from its own
		// start, as when it makes the first attempt itself.
		scheduled = time.Time{}
	}
	s.deliver(n, first, scheduled)
}

// attempt makes n's first attempt under the sequence's policy, as a
// Delivery's first local attempt is made (localAttempt), but recorded
// before the activity answers (RecordNow).
func (s *sequencer) attempt(n NextResult, scheduled time.Time) (DeliverResult, error) {
	p := s.in.Policy
	in := DeliverInput{
		DeliveryID: n.DeliveryID, ScheduledAt: scheduled, Timeout: p.Timeout, Success: p.SuccessCodes,
		Health: p.Health, MayThrottle: true, FinishDelivered: true, RecordNow: true,
	}
	ctx := localAttemptOptions(s.ctx, p.Timeout)
	var res DeliverResult
	err := workflow.ExecuteLocalActivity(ctx, ActivityDeliver, in).Get(ctx, &res)
	return res, err
}

// boundTask ends the current workflow task (a 1 ms timer) once it has made
// sequencerTaskAttempts first attempts.
func (s *sequencer) boundTask() {
	if length := workflow.GetInfo(s.ctx).GetCurrentHistoryLength(); length != s.taskLength {
		s.taskLength, s.taskAttempts = length, 0
	}
	if s.taskAttempts >= sequencerTaskAttempts {
		_ = workflow.Sleep(s.ctx, time.Millisecond)
		s.taskLength, s.taskAttempts = workflow.GetInfo(s.ctx).GetCurrentHistoryLength(), 0
	}
	s.taskAttempts++
}
