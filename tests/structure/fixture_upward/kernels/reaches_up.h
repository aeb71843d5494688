// A kernel header that reaches up into the app: the checker must name it.
#pragma once
#include "gui/widget.h"
