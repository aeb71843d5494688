// An app file that reaches past the engine's face: the checker must name it.
#include "model/config.h"
#include "qwenchat/worker.h"
