// The system's libyaml (libyaml-0-2): the configuration file's and the simulator's scenarios' YAML, parsed and
// emitted without a Foundation-based YAML library (docs/decisions.md, "A binary without ICU").
#include <yaml.h>
