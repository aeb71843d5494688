// Fixture only: an engine internal.
#pragma once
