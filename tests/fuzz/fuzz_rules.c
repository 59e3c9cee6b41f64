/*
 * fuzz_rules.c - the rule-file parser and its expression parser
 * (analyzer/rules/rules.c): any text as a rule file, and the same text as a
 * "--set RULE.THRESHOLD=VALUE" override on the built-in-like rule below.
 */
#include "fuzz.h"
#include "rules.h"

#include <string.h>

static const char base_rule[] =
	"id: fuzz\n"
	"title: fuzz\n"
	"severity: warning\n"
	"threshold: limit = 3\n"
	"select: functions\n"
	"when: traces > limit\n"
	"message: {name} traced {traces} times\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct ruleset rs;
	memcpy(text, data, size);
	text[size] = '\0';
	ruleset_init(&rs);
	ruleset_load_text(&rs, "fuzz.rule", text);
	ruleset_release(&rs);
	ruleset_init(&rs);
	if (ruleset_load_text(&rs, "base.rule", base_rule) == 0)
		ruleset_set(&rs, text);
	ruleset_release(&rs);
	free(text);
	return 0;
}
