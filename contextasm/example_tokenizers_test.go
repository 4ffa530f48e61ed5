package contextasm_test

import (
	"fmt"

	"github.com/contextasm/contextasm/contextasm"
)

// An approximate encoding counts one token per byte until the provider's
// count of some text is reported; then o200k_base counts times the largest
// reported ratio, rounded up.
func ExampleEngine_ReportUsageText() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		panic(err)
	}
	text := "Hello, world!"
	n, _, _ := eng.Count("o200k_base", text)
	fmt.Println("o200k_base:", n)
	n, a, _ := eng.Count("approx:claude", text)
	fmt.Println("approx:claude:", n, a.Basis)
	// The provider counted 5 input tokens for a call that sent text.
	if err := eng.ReportUsageText("approx:claude", text, 5); err != nil {
		panic(err)
	}
	n, a, _ = eng.Count("approx:claude", text)
	fmt.Println("approx:claude:", n, a.Basis, a.Ratio, a.Reports)
	// Output:
	// o200k_base: 4
	// approx:claude: 13 bytes
	// approx:claude: 5 o200k_base 1.25 1
}
