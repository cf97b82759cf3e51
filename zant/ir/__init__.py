"""IR helpers below the dialects: element types and constant payloads."""
