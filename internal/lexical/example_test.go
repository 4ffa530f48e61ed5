package lexical_test

import (
	"fmt"

	"github.com/contextasm/contextasm/internal/lexical"
)

func ExampleTokens() {
	fmt.Println(lexical.Tokens("Caroline's painting class moved to Thursday; feeAmount 3,450 東京タワー"))
	// Output: [caroline paint class move thursday fee amount feeamount 3,450 東京 京タ タワ ワー]
}

func ExampleIndex() {
	// One request's visible blocks: the engine adds a block's Doc when it
	// becomes eligible and removes it when it leaves.
	var x lexical.Index
	turns := []string{
		"Melanie: I ran a charity race for mental health last Saturday.",
		"Caroline: That charity race sounds great!",
		"Melanie: We went camping at the beach with the kids.",
	}
	for _, t := range turns {
		x.Add(lexical.Analyze(t))
	}
	q := lexical.NewQuery("Which charity race was it?")
	rel := make([]float64, len(turns))
	for _, h := range x.Score(q, nil) { // the blocks with a query term, in no order
		rel[h.Doc] = h.Relevance // handles were given in order here
	}
	for i, r := range rel {
		fmt.Printf("%.3f %s\n", r, turns[i])
	}
	// Output:
	// 0.400 Melanie: I ran a charity race for mental health last Saturday.
	// 0.488 Caroline: That charity race sounds great!
	// 0.000 Melanie: We went camping at the beach with the kids.
}
