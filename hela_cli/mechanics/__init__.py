"""The paper's mechanics: Eq.1-5 (dynamics), retrieval with spreading, consolidation, forgetting, feedback."""
