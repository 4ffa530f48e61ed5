package outcome

// ReasonReasoningDropped: a notice on an assistant turn written without
// some or all of its reasoning items, which its provider does not need
// there (they are sent back only on the turn that made the pending tool
// calls, and only to the provider that made them); Event.Tokens counts
// the items left out.
const ReasonReasoningDropped Reason = "reasoning_dropped"
