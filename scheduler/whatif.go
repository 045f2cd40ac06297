package scheduler

import "slices"

// cloneInput deep-copies everything a what-if may change, so the caller's
// input stays untouched.
func cloneInput(in Input) Input {
	out := in
	out.People = slices.Clone(in.People)
	for i := range out.People {
		c := &out.People[i].Calendar
		c.Holidays = slices.Clone(c.Holidays)
		c.TimeOff = slices.Clone(c.TimeOff)
	}
	out.Milestones = slices.Clone(in.Milestones)
	out.Issues = slices.Clone(in.Issues)
	for i := range out.Issues {
		out.Issues[i].Labels = slices.Clone(out.Issues[i].Labels)
		out.Issues[i].DependsOn = slices.Clone(out.Issues[i].DependsOn)
	}
	out.Calibration.ByLabelBias = slices.Clone(in.Calibration.ByLabelBias)
	out.Calibration.ByPersonBias = slices.Clone(in.Calibration.ByPersonBias)
	return out
}
