package workflows

import (
	"strconv"
	"strings"
)

// WorkflowTypes are the workflow types hookrelay's workers register, for
// listing their open runs by version (`hookrelay versions`).
var WorkflowTypes = []string{"Delivery", "Sequencer", "Batcher", "Batch", EndpointWorkflowType, "EventGridValidation"}

// ChangeVersionAttribute is the search attribute in which Temporal records
// every workflow.GetVersion change a run has taken, as "<change>-<version>".
const ChangeVersionAttribute = "TemporalChangeVersion"

// DeliveryRunVersion is the version of the Delivery workflow's code a run
// takes, from what Temporal keeps of it: DeliveryInput.Version when it
// carries one (versionInInput on), else the version of the
// changeLocalBookkeeping marker among its recorded changes (1 to
// versionFinishInAttempt), else 0, the code before any version
// (workflow.DefaultVersion). A run started without a version whose first
// task has not run yet is counted 0 too, though it will take the newest
// marker: the count errs towards keeping a version.
func DeliveryRunVersion(inputVersion int, changes []string) int {
	if inputVersion >= versionInInput {
		return inputVersion
	}
	for _, c := range changes {
		if v, ok := strings.CutPrefix(c, changeLocalBookkeeping+"-"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return 0
}

// DeliveryVersionFromChanges says whether a Delivery run's version is
// known from its recorded changes alone (a changeLocalBookkeeping marker),
// without reading its input.
func DeliveryVersionFromChanges(changes []string) bool {
	for _, c := range changes {
		if strings.HasPrefix(c, changeLocalBookkeeping+"-") {
			return true
		}
	}
	return false
}
