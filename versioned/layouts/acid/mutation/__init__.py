"""The acid layout's side of the mutation API (`versioned.mutation`): writing a group's
ROW__ID-ordered events as delta and delete-delta bucket files (`group_writer`), checking at
commit that the rows they name are live (`live_rows`), and the `MutationFormat` the
registry hands the client (`format`, the layout's ``mutation_format`` method)."""
