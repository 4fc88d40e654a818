DROP TABLE IF EXISTS tool_demotions;
