package tooltest

import "testing"

// TestSampledCoversRowsAndColumns: the default sample holds a cell of every
// row and of every column, about max(rows, cols) cells; the exhaustive run
// holds them all.
func TestSampledCoversRowsAndColumns(t *testing.T) {
	t.Setenv(ExhaustiveEnv, "")
	for rows := 1; rows <= 12; rows++ {
		for cols := 1; cols <= 40; cols++ {
			rowSeen, colSeen := make([]bool, rows), make([]bool, cols)
			n := 0
			for i := range rows {
				for j := range cols {
					if Sampled(i, j, rows, cols) {
						rowSeen[i], colSeen[j] = true, true
						n++
					}
				}
			}
			for i, ok := range rowSeen {
				if !ok {
					t.Errorf("%d × %d: row %d not sampled", rows, cols, i)
				}
			}
			for j, ok := range colSeen {
				if !ok {
					t.Errorf("%d × %d: column %d not sampled", rows, cols, j)
				}
			}
			if n > rows+cols {
				t.Errorf("%d × %d: %d cells sampled, more than %d", rows, cols, n, rows+cols)
			}
		}
	}
	for _, n := range []int{2, 3} {
		for j := range 40 {
			k := 0
			for i := range 40 {
				if SampledN(i, j, 40, 40, n) {
					k++
				}
			}
			if k != n {
				t.Errorf("SampledN(_, %d, 40, 40, %d): %d rows, want %d", j, n, k, n)
			}
		}
	}
	t.Setenv(ExhaustiveEnv, "1")
	if !Sampled(3, 5, 4, 30) {
		t.Errorf("%s=1 does not run every cell", ExhaustiveEnv)
	}
}
