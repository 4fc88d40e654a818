DROP TABLE search_reimpact_lease;
