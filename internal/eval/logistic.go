package eval

import (
	"errors"
	"fmt"
	"math"
)

// ErrSingular is returned by FitLogistic when the features do not determine the
// coefficients (two columns that always move together, and no L2 penalty to choose).
var ErrSingular = errors.New("eval: the features do not determine the coefficients (collinear columns; use an L2 penalty)")

// FitLogistic fits the L2-regularised logistic regression of y (0 or 1) on the rows of x by
// Newton's method (iteratively reweighted least squares, with step halving): it minimises
// Σ log(1 + e^z) − y·z + l2/2 · Σ w_j², z = w_0 + Σ w_j·x_j, the intercept w_0 not penalised.
// It returns the intercept, then one coefficient per column. A column that has the same
// value in every row cannot be told from the intercept: its coefficient is 0.
func FitLogistic(x [][]float64, y []float64, l2 float64) ([]float64, error) {
	if len(x) == 0 || len(x) != len(y) {
		return nil, fmt.Errorf("eval: fit: %d rows and %d labels", len(x), len(y))
	}
	d := len(x[0])
	for i, row := range x {
		if len(row) != d {
			return nil, fmt.Errorf("eval: fit: row %d has %d features, row 1 has %d", i+1, len(row), d)
		}
	}
	// active are the coefficients fitted: the intercept (-1) and every column that varies
	active := []int{-1}
	for j := range d {
		for _, row := range x[1:] {
			if row[j] != x[0][j] {
				active = append(active, j)
				break
			}
		}
	}
	p := len(active)
	value := func(row []float64, a int) float64 {
		if active[a] < 0 {
			return 1
		}
		return row[active[a]]
	}
	loss := func(w []float64) float64 {
		var l float64
		for i, row := range x {
			z := 0.0
			for a := range p {
				z += w[a] * value(row, a)
			}
			l += softplus(z) - y[i]*z
		}
		for a := 1; a < p; a++ {
			l += l2 / 2 * w[a] * w[a]
		}
		return l
	}
	w := make([]float64, p)
	cur := loss(w)
	for range 100 {
		g := make([]float64, p)
		h := make([][]float64, p)
		for a := range h {
			h[a] = make([]float64, p)
		}
		for i, row := range x {
			z := 0.0
			for a := range p {
				z += w[a] * value(row, a)
			}
			mu := 1 / (1 + math.Exp(-z))
			for a := range p {
				va := value(row, a)
				g[a] += (mu - y[i]) * va
				for b := range p {
					h[a][b] += mu * (1 - mu) * va * value(row, b)
				}
			}
		}
		for a := 1; a < p; a++ {
			g[a] += l2 * w[a]
			h[a][a] += l2
		}
		step, err := solve(h, g)
		if err != nil {
			return nil, err
		}
		// halve the step until the loss does not grow (Newton's full step can overshoot
		// when the curvature changes fast, far from the minimum)
		t := 1.0
		next := make([]float64, p)
		for {
			for a := range p {
				next[a] = w[a] - t*step[a]
			}
			if l := loss(next); l <= cur || t < 1e-10 {
				cur = l
				break
			}
			t /= 2
		}
		moved := 0.0
		for a := range p {
			moved = max(moved, math.Abs(next[a]-w[a]))
		}
		copy(w, next)
		if moved < 1e-10 {
			break
		}
	}
	out := make([]float64, d+1)
	for a, j := range active {
		out[j+1] = w[a]
	}
	return out, nil
}

// softplus is log(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// solve solves a·s = b by Gaussian elimination with partial pivoting (a and b are changed).
func solve(a [][]float64, b []float64) ([]float64, error) {
	n := len(b)
	for c := range n {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if math.Abs(a[piv][c]) < 1e-12 {
			return nil, ErrSingular
		}
		a[c], a[piv] = a[piv], a[c]
		b[c], b[piv] = b[piv], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	s := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		v := b[r]
		for k := r + 1; k < n; k++ {
			v -= a[r][k] * s[k]
		}
		s[r] = v / a[r][r]
	}
	return s, nil
}
