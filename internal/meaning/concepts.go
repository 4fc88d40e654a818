package meaning

import (
	"regexp"
	"slices"
	"strings"
)

// Concepts are the words of the operation a request writes out rather than names: an
// equation or arithmetic ("5x + 3 = 20", "17% of 240") asks to calculate, a quantity with a
// unit to convert ("12 km in miles", "100 USD to EUR") asks to convert, a written date
// ("2024-06-01", "March 3") asks about dates. A tool says "calculator", "formula" or
// "converts units"; the request says none of those words, and the lexicon knows no sense
// of "5x" or "=". Each concept comes once, in the order above; none for a text without such
// a form. A bare year or count ("revenue in 2022", "top 5") is no operation.
func Concepts(text string) []string {
	var out []string
	for _, c := range concepts {
		// most requests hold none of the characters a form needs: no regular expression runs
		if !strings.ContainsAny(text, c.needs) {
			continue
		}
		if c.form.MatchString(text) && !slices.Contains(out, c.words[0]) {
			out = append(out, c.words...)
		}
	}
	return out
}

var concepts = []struct {
	needs string // a text the form matches holds one of these characters
	form  *regexp.Regexp
	words []string
}{
	{
		// two operands around an operator, or an equation: 5x + 3 = 20, 2^10, 3 * 4, 7 - 2,
		// x = 7, sqrt(2), 17% of 240 (a minus or a slash only between spaces: 2024-06-01
		// and 06/01 are dates)
		"0123456789(",
		regexp.MustCompile(`(?i)(\b\d+(\.\d+)?[a-z]?\s*[+*^×÷]\s*\(?\s*\d|\b\d+(\.\d+)?[a-z]?\s+[-/]\s+\(?\s*\d|\b[a-z]\s*=\s*-?\d|\d\s*=\s*-?\d|\b(sqrt|log|sin|cos|tan|exp)\s*\(|\b\d+(\.\d+)?\s*%\s*of\s+\d)`),
		[]string{"calculate", "arithmetic", "equation", "formula"},
	},
	{
		// a quantity with a unit, or a currency pair: 12 km, 70°F, 3.5 kg, 100 USD to EUR
		"0123456789",
		regexp.MustCompile(`(?i)(\b\d+(\.\d+)?\s*(°\s*[cf]|km|kms|mi|miles?|kg|kgs|lbs?|pounds?|oz|ounces?|grams?|g|mg|m|cm|mm|meters?|metres?|feet|ft|inch(es)?|in|yards?|yd|liters?|litres?|l|ml|gallons?|gal|celsius|fahrenheit|kelvin|mph|kph|km/h|bytes?|kb|mb|gb|tb)\b\s*(to|in|into)\b|\b\d+(\.\d+)?\s*(usd|eur|gbp|jpy|cny|chf|cad|aud)\s+(to|in|into)\s+(usd|eur|gbp|jpy|cny|chf|cad|aud)\b)`),
		[]string{"convert", "conversion", "unit"},
	},
	{
		// a written date: 2024-06-01, 06/01/2024, March 3, 3rd of May
		"0123456789",
		regexp.MustCompile(`(?i)(\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?)\.?\s+\d{1,2}(st|nd|rd|th)?\b|\b\d{1,2}(st|nd|rd|th)?\s+(of\s+)?(jan(uary)?|feb(ruary)?|march|apr(il)?|may|june?|july?|aug(ust)?|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?)\b)`),
		[]string{"date", "calendar", "day"},
	},
}
