package plan

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// VocabularyError is a vocabulary file that cannot be used.
type VocabularyError struct {
	Path   string
	Reason string
}

func (e *VocabularyError) Error() string {
	return fmt.Sprintf("vocabulary %s: %s", e.Path, e.Reason)
}

// LoadVocabulary reads the heuristic planner's vocabulary from a JSON object of surface
// form → canonical name, such as {"AAPL": "Apple", "Google": "Alphabet"}.
func LoadVocabulary(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &VocabularyError{Path: path, Reason: "want a JSON object of strings: " + err.Error()}
	}
	for s, c := range m {
		if strings.TrimSpace(s) == "" || strings.TrimSpace(c) == "" {
			return nil, &VocabularyError{Path: path, Reason: fmt.Sprintf("empty surface or name in %q: %q", s, c)}
		}
	}
	return m, nil
}
