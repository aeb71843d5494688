// Fixture only.
#pragma once
