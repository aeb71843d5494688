// A tool meant to reach inside: the checker must let it.
#include "model/config.h"
